"""What issue 25 needs a GPU to check: run once on a CUDA machine (about 3 minutes on one H200).

    python bench/cuda_training.py [--keep DIR]

Each part compiles a small program with the installed aurane, runs the generated program
in a subprocess (as ``python prog.py`` would) and prints ``PASS`` or ``FAIL`` with the
numbers it judged by; a part that raises prints ``FAIL`` with the error and the others
still run. The exit status is 0 when every part passed, 1 otherwise, 2 without CUDA.

1. fp16: autocast with the gradient scaler (``precision = "fp16"``): finite losses, the
   scaler's state in the checkpoint, the forward pass in float16.
2. bf16: autocast without a scaler: finite losses, the forward pass in bfloat16.
3. ``compile = true``: torch.compile (inductor) trains to the eager run's losses within
   tolerance; the compile time is shown.
4. A mid-epoch SIGINT then ``--resume`` equals an uninterrupted run bitwise on CUDA
   (deterministic algorithms, ``CUBLAS_WORKSPACE_CONFIG``; two uninterrupted runs are
   compared first, so a non-deterministic kernel shows as such, not as a resume bug).
5. torchrun with NCCL on one GPU: the program's process group is NCCL (joined by the
   driver: with one process ``rt.setup`` starts none), DDP and the distributed sampler run,
   and a mid-epoch signal then a resume equal the uninterrupted run bitwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROGRAM = """
experiment Cuda:
    seed = 1
    device = "cuda"
{precision}

dataset pictures:
    from aurane.data.SyntheticImages
    size = 2048
    image_size = (3, 32, 32)
    num_classes = 10
    batch = 64

model Net:
    input_shape = (3, 32, 32)
    def forward(x):
        x -> conv2d(32, kernel=3, padding=1).relu -> maxpool(2)
          -> conv2d(64, kernel=3, padding=1).relu -> maxpool(2)
          -> flatten() -> dense(128).relu{dropout} -> dense(10)

train Net on pictures:
    epochs = {epochs}
    optimizer = adamw(lr=0.002)
    scheduler = warmup_cosine(warmup=0.1)
    metrics = [accuracy]
    checkpoint_dir = "{folder}"
    accumulate = 2
{extra}"""

# Runs the generated program in a fresh interpreter with deterministic kernels, records
# the dtype its first layer computes in, and saves what the parts compare.
RUNNER = """
import json, os, sys, torch
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
sys.path.insert(0, os.getcwd())
program = __import__(sys.argv[1])
seen = []


class Hooked(program.Net):  # built by the job after its seeding, as the program's own
    def __init__(self):
        super().__init__()
        self.conv2d1.register_forward_hook(lambda m, i, o: seen.append(str(o.dtype)))


program.Net = Hooked
sys.argv = [sys.argv[1] + ".py", *sys.argv[2:]]
try:
    program.rt.main(program.train_net)
finally:
    with open(os.environ["AURANE_BENCH_OUT"], "w") as handle:
        json.dump({"dtypes": sorted(set(seen))}, handle)
"""

TORCHRUN_DRIVER = """
import os, sys, torch, torch.distributed as dist
torch.use_deterministic_algorithms(True)
torch.backends.cudnn.benchmark = False
dist.init_process_group("nccl")  # one process: rt.setup joins none by itself
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
sys.path.insert(0, os.getcwd())
import whole_ddp, split_ddp
from aurane.runtime import Interrupted
assert dist.get_backend() == "nccl"
whole = whole_ddp.train_net()
os.environ["AURANE_SIGNAL_AT"] = "11"
try:
    split_ddp.train_net()
    raise SystemExit("the signal did not stop the run")
except Interrupted as error:
    print("STOPPED", error, flush=True)
del os.environ["AURANE_SIGNAL_AT"]
resumed = split_ddp.train_net(resume_from="split_ddp")
same = all(torch.equal(a, b) for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()))
print("BACKEND", dist.get_backend(), "SAME", same, flush=True)
dist.destroy_process_group()
"""


class Bench:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.results: list[tuple[str, bool, str]] = []

    def compile(self, name: str, **fields: Any) -> Path:
        from aurane.compile import compile_source

        options = {
            "precision": "",
            "epochs": 3,
            "folder": name,
            "extra": "",
            "dropout": " -> dropout(0.1)",
            **fields,
        }
        source = PROGRAM.format(**options)
        (self.folder / f"{name}.aur").write_text(source)
        path = self.folder / f"{name}.py"
        path.write_text(compile_source(source, filename=f"{name}.aur", cache=False))
        (self.folder / "runner.py").write_text(RUNNER)
        return path

    def run(
        self, name: str, *args: str, **env: str
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], float]:
        out = self.folder / f"{name}.json"
        environment = {
            **os.environ,
            "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
            "AURANE_PLOT": "0",
            "AURANE_BENCH_OUT": str(out),
            **env,
        }
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "runner.py", name, *args],
            cwd=self.folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
        )
        seconds = time.perf_counter() - started
        recorded = json.loads(out.read_text()) if out.exists() else {}
        return done, recorded, seconds

    def last(self, name: str) -> dict[str, Any]:
        import torch

        path = self.folder / name / "latest" / "last.pt"
        return torch.load(path, map_location="cpu", weights_only=True)  # type: ignore[no-any-return]

    def part(self, title: str, check: Callable[[], tuple[bool, str]]) -> None:
        print(f"-- {title}", flush=True)
        try:
            ok, detail = check()
        except Exception:
            ok, detail = False, "raised:\n" + textwrap.indent(traceback.format_exc(), "    ")
        print(f"{'PASS' if ok else 'FAIL'} {title}: {detail}", flush=True)
        self.results.append((title, ok, detail))


def _finite_losses(history: list[dict[str, Any]]) -> bool:
    import math

    return bool(history) and all(math.isfinite(row["loss"]) for row in history)


def _failed(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}; stderr tail:\n{textwrap.indent(done.stderr[-1500:], '    ')}"


def fp16(bench: Bench) -> tuple[bool, str]:
    bench.compile("fp16", precision='    precision = "fp16"')
    done, seen, seconds = bench.run("fp16")
    if done.returncode != 0:
        return False, _failed(done)
    last = bench.last("fp16")
    scaler = last.get("scaler") or {}
    losses = [round(row["loss"], 4) for row in last["history"]]
    ok = _finite_losses(last["history"]) and scaler.get("scale", 0) > 0
    ok = ok and seen.get("dtypes") == ["torch.float16"]
    return (
        ok,
        f"losses {losses}, scaler scale {scaler.get('scale')}, forward {seen}, {seconds:.1f}s",
    )


def bf16(bench: Bench) -> tuple[bool, str]:
    bench.compile("bf16", precision='    precision = "bf16"')
    done, seen, seconds = bench.run("bf16")
    if done.returncode != 0:
        return False, _failed(done)
    last = bench.last("bf16")
    losses = [round(row["loss"], 4) for row in last["history"]]
    ok = _finite_losses(last["history"]) and "scaler" not in last
    ok = ok and seen.get("dtypes") == ["torch.bfloat16"]
    return (
        ok,
        f"losses {losses}, no scaler entry: {'scaler' not in last}, forward {seen}, {seconds:.1f}s",
    )


def compiled(bench: Bench) -> tuple[bool, str]:
    # no dropout: inductor draws its random numbers its own way
    bench.compile("eager_run", dropout="")
    bench.compile("compiled_run", dropout="", extra="    compile = true\n")
    done, _, eager_seconds = bench.run("eager_run")
    if done.returncode != 0:
        return False, "eager: " + _failed(done)
    done, _, compiled_seconds = bench.run("compiled_run")
    if done.returncode != 0:
        return False, "compiled: " + _failed(done)
    eager = [row["loss"] for row in bench.last("eager_run")["history"]]
    fast = [row["loss"] for row in bench.last("compiled_run")["history"]]
    worst = max(abs(a - b) / max(abs(a), 1e-8) for a, b in zip(eager, fast, strict=True))
    ok = worst < 2e-2
    return ok, (
        f"epoch losses eager {[round(x, 4) for x in eager]}, compiled {[round(x, 4) for x in fast]} "
        f"(worst relative difference {worst:.2e}, limit 2e-2); {eager_seconds:.1f}s eager, "
        f"{compiled_seconds:.1f}s with compilation"
    )


def resume(bench: Bench) -> tuple[bool, str]:
    import torch

    for name in ("whole_a", "whole_b", "split"):
        bench.compile(name)
    for name in ("whole_a", "whole_b"):
        done, _, _ = bench.run(name)
        if done.returncode != 0:
            return False, f"{name}: " + _failed(done)
    a, b = bench.last("whole_a")["model"], bench.last("whole_b")["model"]
    if not all(torch.equal(a[key], b[key]) for key in a):
        return False, "two uninterrupted runs differ: a kernel here is not deterministic"
    # 32 batches an epoch, 16 steps: after step 21 is epoch 2's 5th step (its 10th batch)
    done, _, _ = bench.run("split", AURANE_SIGNAL_AT="21")
    if done.returncode != 130:
        return False, "interrupted run: " + _failed(done)
    stopped = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    partial = bench.last("split")["partial"]
    done, _, _ = bench.run("split", "--resume")
    if done.returncode != 0:
        return False, "resumed run: " + _failed(done)
    final, whole = bench.last("split"), bench.last("whole_a")
    same_weights = all(torch.equal(final["model"][k], whole["model"][k]) for k in whole["model"])
    same_history = final["history"] == whole["history"]
    ok = same_weights and same_history and partial is not None
    where = f"epoch {partial['epoch']}, batch {partial['batches']}" if partial else "none"
    return ok, (
        f"stopped: {stopped!r}; mid-epoch checkpoint at {where}; weights bitwise equal: "
        f"{same_weights}; history equal: {same_history}"
    )


def torchrun(bench: Bench) -> tuple[bool, str]:
    for name in ("whole_ddp", "split_ddp"):
        bench.compile(name)
    (bench.folder / "ddp_driver.py").write_text(TORCHRUN_DRIVER)
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node=1",
            "ddp_driver.py",
        ],
        cwd=bench.folder,
        env={**os.environ, "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "AURANE_PLOT": "0"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return False, _failed(done) + "\n" + done.stdout[-1500:]
    stopped = next((x for x in done.stdout.splitlines() if x.startswith("STOPPED")), "")
    final = next((x for x in done.stdout.splitlines() if x.startswith("BACKEND")), "")
    ok = "BACKEND nccl SAME True" in final and "at step 11" in stopped
    return ok, f"{stopped}; {final}; {seconds:.1f}s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: this script checks what only a GPU can run", flush=True)
        return 2
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}", flush=True)
    folder = Path(args.keep or tempfile.mkdtemp(prefix="aurane-cuda-"))
    folder.mkdir(parents=True, exist_ok=True)
    bench = Bench(folder)
    started = time.perf_counter()
    bench.part("fp16 autocast with the gradient scaler", lambda: fp16(bench))
    bench.part("bf16 autocast", lambda: bf16(bench))
    bench.part("compile = true (inductor)", lambda: compiled(bench))
    bench.part("mid-epoch SIGINT then --resume, bitwise on CUDA", lambda: resume(bench))
    bench.part("torchrun with NCCL on one GPU, mid-epoch resume", lambda: torchrun(bench))
    passed = sum(ok for _, ok, _ in bench.results)
    print(
        f"\n{passed}/{len(bench.results)} passed in {time.perf_counter() - started:.0f}s",
        flush=True,
    )
    for title, ok, _ in bench.results:
        print(f"  {'PASS' if ok else 'FAIL'} {title}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if passed == len(bench.results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
