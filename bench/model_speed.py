"""Generated models vs hand-written PyTorch twins, and compile with and without the cache.

    .venv/bin/python bench/model_speed.py [--quick]

1. Forward + backward (train mode) of each generated model against a hand-written twin
   with the same weights (copied by parameter order, shapes checked). Before timing, the
   outputs and every gradient are checked equal. Each run times a loop of k steps, with k
   calibrated once so that a run lasts >= 30 ms (one step is far below timer noise), the
   same k for both; runs interleave and alternate. Ratio: median of the per-round ratios
   generated/twin of CPU time (``time.process_time``; with 1 torch thread it does not
   count time spent waiting for a shared core), with its IQR; the wall-clock ratio is
   shown beside it. Target 1.00 +- 0.03.
   Models: bench/programs/mix.aur (Hybrid: conv, batch norm, residual blocks, reshape,
   attention blocks; Mlp; SmallCnn), and examples/zoo programs whose model matches a
   torchvision model's state_dict exactly (that torchvision model is the twin).
2. Compile: no cache vs a warm cache (verified hit), the outputs checked identical.
   In-process (``compile_source``) on one file and on every shipped program in a row, and
   from the CLI (``aurane compile``, a fresh process with bytecode cached) on one file.
   No "cold" row: a first compile into an empty cache adds a folder and an fsync, which
   is not what either side of this comparison is about.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

TOLERANCE = 0.03
WARM_TARGET = 20.0


# ----------------------------------------------------------------- hand-written twins


class ConvUnit(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = F.relu(x + self.conv2(F.relu(self.bn(self.conv1(x)))))
        return out


class AttentionBlock(nn.Module):
    def __init__(self, dim: int = 64) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attn(x, x, x, need_weights=False)[0])
        out: torch.Tensor = self.norm2(self.fc2(F.gelu(self.fc1(x))))
        return out


class Hybrid(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.units = nn.Sequential(ConvUnit(), ConvUnit())
        self.pool = nn.MaxPool2d(2)
        self.blocks = nn.Sequential(AttentionBlock(), AttentionBlock())
        self.head = nn.Linear(1024, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.units(F.relu(self.stem(x))))
        x = self.blocks(x.reshape(x.shape[0], 16, 64))
        out: torch.Tensor = self.head(torch.flatten(x, 1))
        return out


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
        return out


class SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv2(self.pool(F.relu(self.conv1(x)))))
        out: torch.Tensor = self.fc(x.mean(dim=(2, 3)))
        return out


# (model in mix.aur, twin, batch)
MIX_MODELS: tuple[tuple[str, Callable[[], nn.Module], int], ...] = (
    ("Hybrid", Hybrid, 32),
    ("Mlp", Mlp, 256),
    ("SmallCnn", SmallCnn, 64),
)


# ----------------------------------------------------------------- forward + backward


def copy_weights(source: nn.Module, target: nn.Module) -> None:
    """Copy parameters and buffers by registration order (the twins keep source order)."""
    src, dst = source.state_dict(), target.state_dict()
    if [t.shape for t in src.values()] != [t.shape for t in dst.values()]:
        raise c.WorkMismatch(f"{type(source).__name__}: twin does not match the generated layout")
    target.load_state_dict(dict(zip(dst, src.values(), strict=True)))


def step(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    out: torch.Tensor = model(x)
    out.float().sum().backward()  # type: ignore[no-untyped-call]
    return out


def check_same(name: str, ours: nn.Module, twin: nn.Module, x: torch.Tensor, work: c.Work) -> None:
    with torch.no_grad():
        a, b = ours.eval()(x), twin.eval()(x)
    work.same(f"{name}: output shape", tuple(a.shape), tuple(b.shape))
    work.same(
        f"{name}: eval outputs equal (allclose 1e-5)", bool(torch.allclose(a, b, atol=1e-5)), True
    )
    ours.train()
    twin.train()
    step(ours, x)
    step(twin, x)
    grads_a = [p.grad for p in ours.parameters()]
    grads_b = [p.grad for p in twin.parameters()]
    equal = all(
        ga is not None and gb is not None and torch.allclose(ga, gb, atol=1e-4, rtol=1e-4)
        for ga, gb in zip(grads_a, grads_b, strict=True)
    )
    work.same(f"{name}: gradients equal after one train step", equal, True)


def calibrate(fn: Callable[[], object], seconds: float) -> int:
    import time

    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    return max(1, int(seconds / once + 0.5))


def bench_pair(
    name: str,
    ours: nn.Module,
    twin: nn.Module,
    x: torch.Tensor,
    settings: c.Settings,
    result: c.Result,
) -> None:
    check_same(name, ours, twin, x, result.work)
    inner = calibrate(lambda: step(twin, x), settings.pick(0.03, 0.005, 0.001))
    timed = c.paired(
        {"aurane": lambda: step(ours, x), "twin": lambda: step(twin, x)}, settings, inner=inner
    )
    result.work.same(
        f"{name}: steps timed", len(timed["aurane"].wall) * inner, len(timed["twin"].wall) * inner
    )
    ratios = c.round_ratios(timed["aurane"].cpu, timed["twin"].cpu)
    wall = c.round_ratios(timed["aurane"].wall, timed["twin"].wall)
    result.rows.append(
        c.Row(
            f"forward+backward {name}, CPU time (batch {x.shape[0]}, {inner} steps/run)",
            "ms/step",
            c.Summary.of(timed["aurane"].cpu).scaled(1e3),
            c.Summary.of(timed["twin"].cpu).scaled(1e3),
            "hand-written twin",
            ratios.median,
            f"aurane / twin, per-round (IQR {ratios.q1:.3f}-{ratios.q3:.3f})",
            f"1.00 +- {TOLERANCE:g}",
            abs(ratios.median - 1.0) <= TOLERANCE,
            note=f"wall-clock ratio {wall.median:.3f}, IQR {wall.q1:.3f}-{wall.q3:.3f}",
        )
    )


def zoo_twins(quick: bool) -> list[tuple[str, nn.Module, nn.Module, torch.Tensor]]:
    """Zoo models whose state_dict matches a torchvision model (same keys and shapes)."""
    if quick:
        return []
    try:
        import torchvision.models as tvm
    except ImportError:
        return []
    from aurane.compile import compile_source

    found = []
    for path in c.zoo_programs():
        text = path.read_text()
        front = c.run_front_end(text, path.name)
        if not front.ok:
            continue
        namespace = c.load_generated(compile_source(text, filename=path.name), f"zoo_{path.stem}")
        for model, graph in front.graphs.items():
            builder = getattr(tvm, model.lower(), None)
            if builder is None or graph.input_value.sample_shape is None:
                continue
            try:
                torch.manual_seed(0)
                ours, twin = namespace[model](), builder(weights=None)
            except Exception:
                continue
            a, b = ours.state_dict(), twin.state_dict()
            if list(a) != list(b) or any(a[k].shape != b[k].shape for k in a):
                continue
            twin.load_state_dict(a)
            found.append(
                (f"zoo {model}", ours, twin, torch.randn(2, *graph.input_value.sample_shape))
            )
    return found


# ----------------------------------------------------------------- compile


def digest(data: str | bytes) -> str:
    import hashlib

    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()[:16]


def bench_compile(settings: c.Settings, result: c.Result, cli: bool) -> None:
    from aurane.cache import CompileCache
    from aurane.compile import compile_source

    files = c.usable_programs(result)
    sources = {p: p.read_text() for p in files}
    single = c.PROGRAMS / "mix.aur"
    with tempfile.TemporaryDirectory() as root:
        cache = CompileCache(Path(root) / "inproc")
        reference = {p: compile_source(t, filename=p.name) for p, t in sources.items()}
        for p, t in sources.items():  # fill the cache: every timed warm call is a hit
            cached = compile_source(t, filename=p.name, cache=cache)
            result.work.same(
                f"{p.name}: cached output sha256", digest(cached), digest(reference[p])
            )
        hits = cache.stats.hits

        def nocache_one() -> None:
            compile_source(sources[single], filename=single.name)

        def warm_one() -> None:
            compile_source(sources[single], filename=single.name, cache=cache)

        def nocache_all() -> None:
            for p, t in sources.items():
                compile_source(t, filename=p.name)

        def warm_all() -> None:
            for p, t in sources.items():
                compile_source(t, filename=p.name, cache=cache)

        one = c.paired({"aurane": warm_one, "baseline": nocache_one}, settings)
        many = c.paired({"aurane": warm_all, "baseline": nocache_all}, settings)
        expected = (settings.warmup + len(one["aurane"].wall)) + (
            settings.warmup + len(many["aurane"].wall)
        ) * len(files)
        result.work.same(
            "in-process warm calls that were verified cache hits", cache.stats.hits - hits, expected
        )
        result.rows.append(
            c.speedup_row(
                f"in-process compile, one file ({single.name}): warm cache vs no cache",
                one["aurane"].wall,
                one["baseline"].wall,
                "no cache",
                WARM_TARGET,
            )
        )
        result.rows.append(
            c.speedup_row(
                f"in-process compile, {len(files)} shipped programs in a row: warm vs no cache",
                many["aurane"].wall,
                many["baseline"].wall,
                "no cache",
                WARM_TARGET,
            )
        )
        if cli:
            bench_cli(settings, result, single, Path(root))


def bench_cli(settings: c.Settings, result: c.Result, source: Path, root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPATH=str(c.REPO / "src"),
        PYTHONPYCACHEPREFIX=str(root / "pycache"),
        AURANE_CACHE_DIR=str(root / "cli-cache"),
    )
    base = [sys.executable, "-m", "aurane", "compile", str(source), "-q", "-o"]
    warm_out, plain_out = root / "warm.py", root / "plain.py"
    warm = [*base, str(warm_out)]
    plain = [*base, str(plain_out), "--no-cache"]
    for command in (warm, plain):  # bytecode written, cache filled
        subprocess.run(command, check=True, capture_output=True, env=env)
    timed = c.paired(
        {
            "aurane": lambda: subprocess.run(warm, check=True, capture_output=True, env=env),
            "baseline": lambda: subprocess.run(plain, check=True, capture_output=True, env=env),
        },
        settings,
    )
    result.work.same(
        "CLI: warm and no-cache output sha256",
        digest(warm_out.read_bytes()),
        digest(plain_out.read_bytes()),
    )
    row = c.speedup_row(
        f"`aurane compile {source.name}` CLI (fresh process, bytecode cached): warm vs --no-cache",
        timed["aurane"].wall,
        timed["baseline"].wall,
        "--no-cache",
        1.0,
        note="no target set; interpreter start bounds it",
    )
    row.target, row.met = "-", None
    result.rows.append(row)


# ----------------------------------------------------------------- main


def run(settings: c.Settings, cli: bool = True) -> c.Result:
    result = c.Result("model_speed", settings=c.configure(settings))
    from aurane.compile import compile_source

    namespace = c.load_generated(
        compile_source((c.PROGRAMS / "mix.aur").read_text(), filename="mix.aur"), "bench_mix"
    )
    for name, twin_cls, batch in MIX_MODELS:
        torch.manual_seed(0)
        ours, twin = namespace[name](), twin_cls()
        copy_weights(ours, twin)
        shape = {"Hybrid": (3, 16, 16), "Mlp": (64,), "SmallCnn": (1, 16, 16)}[name]
        x = torch.randn(settings.pick(batch, batch // 4, 4), *shape)
        bench_pair(name, ours, twin, x, settings, result)
    for name, ours, twin, x in zoo_twins(settings.quick):
        bench_pair(name, ours, twin, x, settings, result)
    if not c.zoo_programs():
        result.note("examples/zoo is absent: no zoo models measured")
    bench_compile(settings, result, cli)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--no-cli", action="store_true")
    args = parser.parse_args(argv)
    from report import print_result

    settings = c.Settings.make(args.quick, smoke=args.smoke)
    print_result(run(settings, cli=not (args.no_cli or args.smoke)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
